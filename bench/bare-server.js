// The ceiling: a bare node:http server answering every request with one prebuilt body.
import http from 'node:http';
import fs from 'node:fs';

const [port, file] = process.argv.slice(2);
const body = fs.readFileSync(file);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
http.createServer((_req, res) => res.writeHead(200, headers).end(body)).listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
