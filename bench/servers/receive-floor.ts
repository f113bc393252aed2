import http from 'node:http';

/**
 * The receive floor of the upload benchmark: bare node:http reading a request body and
 * discarding it, then answering 200. What any server must spend to take the bytes in,
 * measured in its own process, as the service runs in its own. Prints "listening on <port>".
 */
const server = http.createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ bytes }));
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
