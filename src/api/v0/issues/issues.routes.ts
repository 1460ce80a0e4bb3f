import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /issues/ are being written.
export async function issueRoutes(_app: FastifyInstance): Promise<void> {}
