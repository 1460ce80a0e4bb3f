import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /committees/ are being written.
export async function committeeRoutes(_app: FastifyInstance): Promise<void> {}
