import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /repositories/ are being written.
export async function repositoryRoutes(_app: FastifyInstance): Promise<void> {}
