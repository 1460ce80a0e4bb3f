import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /organizations/ are being written.
export async function organizationRoutes(_app: FastifyInstance): Promise<void> {}
