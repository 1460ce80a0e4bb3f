import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /events/ are being written.
export async function eventRoutes(_app: FastifyInstance): Promise<void> {}
