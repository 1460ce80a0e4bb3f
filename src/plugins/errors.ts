// The one error handler: every error body of the service is shaped here.
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, isDatabaseUnavailable, type ParamError } from '../errors.ts';

interface ValidationItem {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const LOCATIONS: Record<string, string> = { querystring: 'query', params: 'path', body: 'body', headers: 'header' };

function validationErrors(error: FastifyError): ParamError[] {
  const where = LOCATIONS[error.validationContext ?? ''] ?? 'request';
  return (error.validation as ValidationItem[]).map((item) => {
    const name =
      item.instancePath.replace(/^\//, '').split('/')[0] ||
      String(item.params.missingProperty ?? item.params.additionalProperty ?? '');
    let msg = item.message ?? 'is invalid';
    if (item.keyword === 'enum' && Array.isArray(item.params.allowedValues)) {
      msg = `must be one of: ${item.params.allowedValues.join(', ')}`;
    }
    return { loc: name ? [where, name] : [where], msg };
  });
}

export function registerErrorHandling(app: FastifyInstance, allowedMethods: (path: string, method: string) => string | undefined): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      return reply.code(error.statusCode).headers(error.headers).send(error.body);
    }
    if (error.validation) {
      return reply.code(400).send({ message: 'Invalid request', errors: validationErrors(error) });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
      return reply.code(503).header('retry-after', '5').send({ message: 'Service unavailable' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ message: error.message });
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.code(500).send({ message: 'Internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    const allow = allowedMethods(request.url.split('?')[0] ?? '', request.method);
    if (allow) return reply.code(405).header('allow', allow).send({ message: 'Method not allowed' });
    return reply.code(404).send({ message: 'Not found' });
  });
}
