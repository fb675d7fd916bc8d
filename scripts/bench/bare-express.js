// Baseline (2): a bare Express 5 app as usually written: express.json() and res.json, on Node's default server.
const express = require('express');

const app = express();
app.use(express.json());
app.all('/{*path}', (req, res) => res.json({ success: true, message: 'Success' }));
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
