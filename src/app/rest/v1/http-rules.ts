import { NextFunction, Request, Response } from 'express';
import { GraphQLSchema } from 'graphql';
import { MethodNotAllowedError, UnsupportedMediaTypeError } from '../../../common/errors';
import { gotType, hasBody, mediaType } from '../../http/body-type';
import { sendMiddlewareError } from '../../http/respond';
import { sendRestError } from '../errors';
import { RouteSpec } from './route-spec';

/** The media types a route's body may have: JSON, and for the import also its form and multipart uploads. */
export function acceptedTypes(spec: RouteSpec): string[] {
  return spec.upload ? ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'] : ['application/json'];
}

/**
 * A /v1 write whose body is not of a type it reads is a 415 that names the accepted types; before this a
 * JSON body sent as text/plain was ignored and answered with a 422 about missing fields.
 */
export function requireBodyType(routes: readonly RouteSpec[]) {
  const patterns = routes
    .filter((r) => r.method === 'post' || r.method === 'put')
    .map((r) => ({ spec: r, pattern: pathPattern(r.path) }));
  return (req: Request, res: Response, next: NextFunction): void => {
    if ((req.method !== 'POST' && req.method !== 'PUT') || !hasBody(req)) return next();
    const route = patterns.find((p) => p.spec.method === req.method.toLowerCase() && p.pattern.test(req.path));
    if (!route) return next();
    const types = acceptedTypes(route.spec);
    const given = mediaType(req);
    if (types.includes(given)) return next();
    // A refusal before the body is read, answered as /graphql's (http/respond.ts refusalAnswer).
    sendMiddlewareError(req, res, new UnsupportedMediaTypeError(`${req.method} ${route.spec.path.replace(/:(\w+)/g, '{$1}')} reads a body of type ${types.join(', ')}; ${gotType(given)}`));
  };
}

function pathPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/:(\w+)/g, '[^/]+')}/?$`);
}

/** A documented path asked with a method it does not take: 405 with the Allow header, not a 404. */
export function methodNotAllowed(schema: GraphQLSchema, routes: readonly RouteSpec[]) {
  const paths = new Map<string, { pattern: RegExp; methods: string[] }>();
  for (const route of routes) {
    const entry = paths.get(route.path) ?? { pattern: pathPattern(route.path), methods: [] };
    entry.methods.push(route.method.toUpperCase());
    paths.set(route.path, entry);
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    const allowed = [...paths.values()].filter((p) => p.pattern.test(req.path)).flatMap((p) => p.methods);
    if (!allowed.length) return next();
    const methods = [...new Set(allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed)];
    res.setHeader('allow', methods.join(', '));
    sendRestError(res, schema, new MethodNotAllowedError(methods, `${req.method} is not allowed on ${req.path}; it takes ${methods.join(', ')}`), false);
  };
}
