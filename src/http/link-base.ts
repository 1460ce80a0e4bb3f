// The start of the absolute addresses of Link headers (the lists' pages).
import type { FastifyRequest } from 'fastify';

/** A host as HTTP allows it (a name or an address, a port): anything else is never written into a Link. */
const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * Where the Link header's addresses start, as GitHub's do: PUBLIC_URL, else the scheme and host of the request
 * (behind a proxy, as TRUST_PROXY lets Fastify read them); '' (addresses from the path) for a host that is not one.
 * The response cache keeps links without it and adds it again per request (response-cache.ts).
 */
export function linkBase(request: FastifyRequest): string {
  const configured = request.server.config.publicUrl;
  if (configured) return configured.replace(/\/+$/, '');
  return hostLinkBase(request.protocol, request.host);
}

/** The origin of a scheme and a Host header, or '' for a host that is not one. */
export function hostLinkBase(protocol: string, host: string): string {
  return HOST.test(host) ? `${protocol}://${host}` : '';
}
