/**
 * Who is signed in: loaded from /api/auth/me once for the app's life (and again after signing in or out), kept here,
 * and shared through a Preact context. Only a 401 means "signed out": a refused or failed call (429, a network
 * error) leaves the session as it was.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, get, setCsrfToken } from './api.js';

export interface User {
  id: string;
  username: string;
  name: string | null;
  tier: string;
}

/** The language model behind runs, judging and chat: `offline` means rules, not a model. */
export interface LlmInfo {
  provider: 'offline' | 'openai-compatible';
  model: string;
}

export interface SessionInfo {
  user: User | null;
  llm?: LlmInfo;
  loaded: boolean;
  refresh: () => Promise<void>;
}

/** The signed-in user (null when signed out); throws when the answer says nothing about the session (429, 5xx, offline). */
export async function loadMe(): Promise<{ user: User | null; llm?: LlmInfo }> {
  try {
    const me = await get('/api/auth/me');
    setCsrfToken(me.data.csrfToken);
    return { user: me.data.user, llm: me.data.llm };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      setCsrfToken(undefined);
      return { user: null };
    }
    throw err;
  }
}

export const SessionContext = createContext<SessionInfo>({ user: null, loaded: false, refresh: async () => undefined });
export const useSession = () => useContext(SessionContext);
