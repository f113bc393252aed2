import fs from 'node:fs';
import http from 'node:http';
import express from 'express';

/**
 * The floors of the serving benchmark: a server that answers every request with the same
 * bytes, either a minimal Express 5 app or bare node:http. Usage: <express|http> <file>
 * <content-type>; prints "listening on <port>".
 */
const [kind, file, contentType] = process.argv.slice(2) as [string, string, string];
const body = fs.readFileSync(file);

const server =
  kind === 'express'
    ? http.createServer(
        express()
          .disable('x-powered-by')
          .set('etag', false)
          .get('/{*path}', (_req, res) => {
            res.setHeader('Content-Type', contentType);
            res.end(body);
          }),
      )
    : http.createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
        res.end(body);
      });
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
