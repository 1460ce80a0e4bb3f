// The one error handler: every error body of the service is shaped here.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isDatabaseUnavailable, type ParamError } from '../errors.ts';
import { baseSecurityHeaders } from './security-headers.ts';

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

export function registerErrorHandling(
  app: FastifyInstance,
  allowedMethods: (path: string, method: string) => string | undefined,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      return reply.code(error.statusCode).headers(error.headers).send(error.body);
    }
    if (error.validation) {
      return reply.code(400).send({ message: 'Invalid request', errors: validationErrors(error) });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
      return reply.code(503).header('retry-after', '5').send({ message: 'Service unavailable', error_id: request.id });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ message: error.message });
    }
    request.log.error({ err: error }, 'unexpected error');
    // The request id (X-Request-Id, in every log line of the request) finds the cause in the log.
    return reply.code(500).send({ message: 'Internal server error', error_id: request.id });
  });

  app.setNotFoundHandler((request, reply) => {
    const allow = allowedMethods(request.url.split('?')[0] ?? '', request.method);
    if (allow) return reply.code(405).header('allow', allow).send({ message: 'Method not allowed' });
    return reply.code(404).send({ message: 'Not found' });
  });
}

const MALFORMED = { message: 'Invalid request', errors: [{ loc: ['request'], msg: 'is not a valid HTTP request' }] };

/**
 * Errors Fastify answers before any route or hook runs: a path that is not valid URL encoding (400)
 * and a path parameter over maxParamLength (414). Our shape, and never the URL echoed back.
 */
export function frameworkErrors(production: boolean) {
  const security = baseSecurityHeaders(production);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.headers(security);
    reply.header('x-request-id', request.id);
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      void reply.code(414).send({ message: 'URI too long' });
    } else if (error.code === 'FST_ERR_BAD_URL') {
      void reply.code(400).send({ message: 'Invalid request', errors: [{ loc: ['path'], msg: 'is not a valid URL' }] });
    } else {
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      void reply
        .code(status)
        .send(
          status === 500 ? { message: 'Internal server error', error_id: request.id } : { message: 'Invalid request' },
        );
    }
  };
}

/**
 * Requests Node's HTTP parser cannot read (a bad request line or header, headers over the size
 * limit, a timeout): our error shape, `Connection: close` since the socket is closed after it, and
 * no body for a HEAD request (its client would read the body as the next response).
 */
export function clientErrorHandler(production: boolean) {
  const security = Object.entries(baseSecurityHeaders(production))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let status = 400;
    let body: object = MALFORMED;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      body = { message: 'Request header fields too large' };
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      body = { message: 'Request timeout' };
    }
    const text = JSON.stringify(body);
    const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(text)}\r\n${security}Connection: close\r\n\r\n${head ? '' : text}`,
      );
    }
    socket.destroy();
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
