import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /sponsors/ are being written.
export async function sponsorRoutes(_app: FastifyInstance): Promise<void> {}
