import type { FastifyInstance } from 'fastify';

// Placeholder: routes of /members/ are being written.
export async function memberRoutes(_app: FastifyInstance): Promise<void> {}
