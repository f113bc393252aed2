import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface RequestFromOptions {
  key?: string;
  method?: string;
  body?: string;
  /** The client's address (all of 127.0.0.0/8 is loopback on Linux): a client of its own. */
  from?: string;
}

/**
 * A request from a chosen client address, on a connection of its own (fetch cannot pick the
 * local address): for limits counted per client address.
 */
export function requestFrom(url: string, options: RequestFromOptions = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.key !== undefined) headers['x-service-api-key'] = options.key;
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers, agent: false, localAddress: options.from ?? '127.0.0.1' },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
