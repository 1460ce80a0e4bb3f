// Where a webhook may be sent (no SSRF, docs/security.md): `https` only, to a name that resolves to public addresses
// only. Checked when the webhook is registered and again before every delivery, whose connection goes to the address
// checked then (webhook-client.ts), so that a name re-pointed between the check and the connection gains nothing.
// WEBHOOKS_ALLOW_PRIVATE=true (tests, private networks) allows `http` and every address.
import dns from 'node:dns';
import net from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses (the system's resolver by default; tests pass their own). */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

/** A target refused: the message says why, in words an owner can act on (never a secret: URLs carry none). */
export class TargetRefusedError extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED';
}

export const MAX_URL_LENGTH = 2048;

const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 itself
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (and 100.100.100.200, a cloud metadata address)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, 169.254.169.254 the cloud metadata address
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: an IPv4 address inside
  ['fc00::', 7], // unique-local, fd00:ec2::254 the EC2 metadata address
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** The 16 bits groups of an IPv6 address (`::` expanded, a dotted IPv4 tail turned into two groups). */
function groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const g = groups(address);
  if (g.length !== 8 || g.slice(0, 5).some((x) => x !== 0) || (g[5] !== 0xffff && g[5] !== 0)) return undefined;
  return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
}

/** Whether an address is loopback, private, link-local, CGNAT, unique-local, multicast, reserved or a metadata one. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const inner = embeddedIpv4(address);
  if (inner !== undefined) return blocked.check(inner, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** The URL, parsed, when its form is acceptable (before any address is looked at). */
export function parseTarget(text: string, allowPrivate: boolean): URL {
  if (text.length > MAX_URL_LENGTH)
    throw new TargetRefusedError(`The URL is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefusedError('The URL is not a valid absolute URL.');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    throw new TargetRefusedError(`The URL must use ${allowPrivate ? 'https or http' : 'https'}.`);
  if (url.username || url.password) throw new TargetRefusedError('The URL must not carry a user name or password.');
  if (!url.hostname) throw new TargetRefusedError('The URL has no host.');
  return url;
}

/** The host of a URL without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Checks a target and gives back the address to connect to: every address the name resolves to must be public
 * (unless private ones are allowed), so that no answer of a resolver can lead to an inside address.
 */
export async function checkTarget(url: URL, allowPrivate: boolean, lookup: Lookup): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const literal = net.isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await lookup(host);
    } catch {
      throw new TargetRefusedError(`The host ${host} cannot be resolved.`);
    }
    if (addresses.length === 0) throw new TargetRefusedError(`The host ${host} cannot be resolved.`);
  }
  if (!allowPrivate) {
    const inside = addresses.find(({ address }) => isPrivateAddress(address));
    if (inside)
      throw new TargetRefusedError(
        `The host ${host} is or resolves to ${inside.address}, a loopback, private, link-local or reserved address: webhooks are sent to public addresses only.`,
      );
  }
  return addresses[0]!;
}
