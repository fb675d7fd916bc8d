// Baseline (2): a bare Express 5 app answering the receiver's success body after express.json().
const express = require('express');

const app = express();
app.use(express.json());
const answer = (req, res) => res.json({ success: true, message: 'Success' });
app.all('/{*path}', answer);
app.listen(Number(process.env.PORT), '127.0.0.1');
