/** Who is signed in: loaded from /api/auth/me, kept here, and shared through a Preact context. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { get, setCsrfToken } from './api.js';

export interface User {
  id: string;
  username: string;
  name: string | null;
  tier: string;
}

export interface SessionInfo {
  user: User | null;
  loaded: boolean;
  refresh: () => Promise<void>;
}

export async function loadMe(): Promise<User | null> {
  try {
    const me = await get('/api/auth/me');
    setCsrfToken(me.data.csrfToken);
    return me.data.user;
  } catch {
    setCsrfToken(undefined);
    return null;
  }
}

export const SessionContext = createContext<SessionInfo>({ user: null, loaded: false, refresh: async () => undefined });
export const useSession = () => useContext(SessionContext);
