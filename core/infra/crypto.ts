/**
 * Key material: API keys (shown once, stored as SHA-256), the admin token check, and the AES-256-GCM envelope that
 * carries an execution's env to the worker.
 */
import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PATTERN = /^tsk_[0-9A-Za-z]{40}$/;

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      // 248 = 62 * 4: reject the top values to keep the distribution uniform.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `tsk_${randomBase62(40)}`;
  return { key, prefix: key.slice(0, 8), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** Derives the 32-byte AES key from SECRETS_KEY (any string; hashed so that length does not matter). */
function aesKey(secretsKey: string): Buffer {
  return crypto.createHash('sha256').update(`toolshed-env:${secretsKey}`).digest();
}

/** Encrypts a JSON value: `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function sealJson(secretsKey: string, value: unknown): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', aesKey(secretsKey), iv);
  const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
}

export function openJson<T = unknown>(secretsKey: string, sealed: string): T {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('Malformed sealed payload');
  const decipher = crypto.createDecipheriv('aes-256-gcm', aesKey(secretsKey), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const pt = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  return JSON.parse(pt.toString('utf8')) as T;
}
