import { Hono } from 'hono';
import { AppError } from '../../core/errors.ts';

/**
 * What only RuoYi's Java backend has: the code generator (tool/gen), Druid's SQL monitor and
 * Swagger UI. Answered as documented errors (docs/ruoyi.md), never a 404: API calls get code 501
 * with a message the client shows; the iframe pages get a small HTML page saying so.
 */
const GEN_MSG = 'Code generation is part of RuoYi\'s Java backend and is not offered by this server';

const page = (title: string, text: string, link?: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font:15px system-ui,sans-serif;margin:2em;color:#333"><h2>${title}</h2><p>${text}</p>` +
  (link ? `<p><a href="${link}" target="_blank" rel="noopener">${link}</a></p>` : '') +
  `</body></html>`;

export const javaOnlyRoutes = new Hono()
  .all('/tool/gen/*', () => {
    throw new AppError('NOT_IMPLEMENTED', GEN_MSG);
  })
  .all('/tool/gen', () => {
    throw new AppError('NOT_IMPLEMENTED', GEN_MSG);
  })
  .get('/druid/*', (c) =>
    c.html(page('Druid monitor: not available', 'Druid is the connection pool of RuoYi\'s Java backend. This server has no Druid; the request timings are in each answer\'s Server-Timing header and the operation log.')),
  )
  .get('/swagger-ui/*', (c) =>
    c.html(page('Swagger UI: not here', 'This server describes its own API (not RuoYi\'s) as OpenAPI 3.1, with its own reference page at /docs on the server\'s root.', '/docs')),
  )
  .get('/v3/api-docs/*', () => {
    throw new AppError('NOT_IMPLEMENTED', 'RuoYi\'s api-docs are not served: this server\'s own OpenAPI document is /openapi.json');
  });
