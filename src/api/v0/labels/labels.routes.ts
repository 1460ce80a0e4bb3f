import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /labels/ are being written.
export async function labelRoutes(_app: FastifyInstance): Promise<void> {}
