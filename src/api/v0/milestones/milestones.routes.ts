import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /milestones/ are being written.
export async function milestoneRoutes(_app: FastifyInstance): Promise<void> {}
