// The ceiling: a bare node:http server answering every request with one prebuilt body: with its own two headers, or,
// given a JSON file of [name, value] pairs, with those too (the header fields of the service's cached answer). A POST's
// body is read first (paused mode, until Node calls the message complete, as src/mcp/mcp.early.ts reads it) and parsed
// as JSON: the floor of a POST /mcp answered early. With BARE_POST_UNREAD=1 a POST is answered without its body being
// read at all (Node discards it): what Node's HTTP server alone costs for a request with a body (bench/post-floor.ts).
import http from 'node:http';
import fs from 'node:fs';
import { Buffer } from 'node:buffer';

const [port, file, headersFile] = process.argv.slice(2);
const body = fs.readFileSync(file);
const extra = headersFile ? JSON.parse(fs.readFileSync(headersFile, 'utf8')) : [];
const own = extra.some(([name]) => name === 'content-type') ? [] : ['content-type', 'application/json; charset=utf-8'];
const headers = [...extra.flat(), ...own, 'content-length', body.length];
const unread = process.env.BARE_POST_UNREAD === '1';
http
  .createServer((req, res) => {
    if (req.method !== 'POST' || unread) return res.writeHead(200, headers).end(body);
    const chunks = [];
    req.on('readable', () => {
      let chunk;
      while ((chunk = req.read()) !== null) chunks.push(chunk);
      if (!req.complete) return;
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, headers).end(body);
    });
  })
  .listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
