import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /projects/ are being written.
export async function projectRoutes(_app: FastifyInstance): Promise<void> {}
