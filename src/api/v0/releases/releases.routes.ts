import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /releases/ are being written.
export async function releaseRoutes(_app: FastifyInstance): Promise<void> {}
