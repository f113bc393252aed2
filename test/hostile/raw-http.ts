import net from 'node:net';

/**
 * A raw HTTP/1.1 client: the request is written byte for byte as given, so a test can send
 * what fetch refuses to (invalid UTF-8 in the path, broken framing, oversized headers).
 * Every request asks for `Connection: close` and the answer is read to the socket's end.
 */

export interface RawRequest {
  method: string;
  /** The request target as raw bytes or text, query string included. */
  target: string | Buffer;
  headers?: [string, string | Buffer][];
  body?: Buffer;
  /** Content-Length is added for a body unless the headers set framing themselves. */
  framing?: 'content-length' | 'as-given';
  /** Bytes sent instead of a request built from the fields above. */
  raw?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function serialize(request: RawRequest): Buffer {
  if (request.raw) return request.raw;
  const lines: Buffer[] = [
    Buffer.concat([
      Buffer.from(`${request.method} `),
      toBuffer(request.target),
      Buffer.from(' HTTP/1.1\r\n'),
    ]),
  ];
  const headers: [string, string | Buffer][] = [
    ['Host', '127.0.0.1'],
    ['Connection', 'close'],
    ...(request.headers ?? []),
  ];
  if (request.body && request.framing !== 'as-given')
    headers.push(['Content-Length', String(request.body.length)]);
  for (const [name, value] of headers)
    lines.push(Buffer.concat([Buffer.from(`${name}: `), toBuffer(value), Buffer.from('\r\n')]));
  lines.push(Buffer.from('\r\n'));
  if (request.body) lines.push(request.body);
  return Buffer.concat(lines);
}

const toBuffer = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value, 'utf8') : value);

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('truncated chunked body');
    const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

export function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0)
    throw new Error(
      `no complete response head in ${raw.length} bytes: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`,
    );
  const [statusLine = '', ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(body);
  else if (headers['content-length'] !== undefined)
    body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body };
}

/** Sends the request and resolves with the parsed answer; rejects on a reset or after `timeoutMs`. */
export function send(port: number, request: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      // A reset after a complete answer is the server closing early: the answer still counts.
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch {
        reject(error);
      }
    });
    socket.on('end', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    // No half-close after writing: node's server takes a client's FIN as the request aborted.
    socket.write(serialize(request));
  });
}
