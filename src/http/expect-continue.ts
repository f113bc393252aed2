import type http from 'node:http';

const refused = new WeakSet<http.IncomingMessage>();

/** Whether the client of this request was denied its `100 Continue`: its body never comes. */
export function waitsInVain(req: http.IncomingMessage): boolean {
  return refused.has(req);
}

/**
 * `Expect: 100-continue`: the client waits for `100 Continue` before sending its body. Node
 * sends it to every such request unless the server listens for `checkContinue`; here a
 * request that declares a body of `maxBytes` or more (no route accepts that much) goes to
 * the app without it, and the route refuses it from Content-Length with an immediate 413,
 * so the client never starts sending. Every other request gets its 100 and goes on as usual.
 */
export function answerExpectContinue(server: http.Server, maxBytes: number): void {
  server.on('checkContinue', (req, res) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared >= maxBytes) {
      // Whatever the answer, the body never comes: the connection ends with it.
      refused.add(req);
      res.setHeader('Connection', 'close');
    } else {
      res.writeContinue();
    }
    server.emit('request', req, res);
  });
}
