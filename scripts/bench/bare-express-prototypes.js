// Baseline (4): the same bare Express 5 app, served by the receiver's own server factory (dist/process/http-server.js),
// with its time limits and JSON answers for malformed HTTP. Against (2), what the server options alone cost.
const express = require('express');
const { createHttpServer } = require('../../dist/process/http-server');

const app = express();
app.use(express.json());
app.all('/{*path}', (req, res) => res.json({ success: true, message: 'Success' }));
const server = createHttpServer(app).listen(Number(process.env.PORT), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
