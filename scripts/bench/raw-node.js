// Baseline (3): raw node:http doing JSON.parse of the body and the same answer.
const http = require('node:http');

const ANSWER = JSON.stringify({ success: true, message: 'Success' });
const server = http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
  });
