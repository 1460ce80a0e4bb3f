// How one variable of the environment is read and checked: each reader names the variable in the error that stops
// start-up. Only config.ts calls them (it alone is given process.env).
import net from 'node:net';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/** `90`, `90s`, `30m`, `1h`, `1d` → milliseconds; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})\s*([smhd]?)$/i.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * DURATION_UNITS[(match[2] || 's').toLowerCase()]! * 1_000;
}

/** `30m`, `1h`, `90` (seconds); unset, `0` or `off`: undefined. */
export function duration(env: Env, name: string, minMs: number): number | undefined {
  const raw = text(env, name);
  if (raw === undefined || raw === '0' || raw.toLowerCase() === 'off') return undefined;
  const ms = parseDuration(raw);
  if (ms === null)
    throw new ConfigError(name, `must be a duration such as 30m, 1h or a number of seconds, got "${raw}"`);
  if (ms < minMs) throw new ConfigError(name, `must be at least ${minMs / 1000} seconds, got "${raw}"`);
  return ms;
}

export function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `true`, `false`, a hop count, or a comma-separated list of addresses and CIDR ranges. */
export function trustProxy(env: Env, name: string): boolean | number | string[] {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = list(env, name);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = net.isIP(address ?? '');
    const maxBits = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))) {
      throw new ConfigError(
        name,
        `must be true, false, a number of hops or a list of addresses/CIDR ranges, got "${entry}"`,
      );
    }
  }
  return entries;
}

export function origins(env: Env, name: string): string[] {
  const entries = list(env, name);
  if (entries.length === 0) return ['*'];
  for (const entry of entries) {
    if (entry === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(entry);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== entry.replace(/\/+$/, '')) {
      throw new ConfigError(name, `must be * or a list of origins such as https://example.org, got "${entry}"`);
    }
  }
  return entries.includes('*') ? ['*'] : entries.map((entry) => entry.replace(/\/+$/, ''));
}

export function url(env: Env, name: string, protocols: readonly string[], fallback?: string): string | undefined {
  const raw = text(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
  }
  return raw.replace(/\/+$/, '');
}
