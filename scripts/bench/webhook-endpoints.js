// Webhook endpoints for bench:delivery (delivery-isolation.ts), in a process of their own that the bench runs under
// SCHED_IDLE, as if on another host: one HTTP server per argument, answering each POST with that status
// (`never`: no answer). A GET answers how many POSTs it received. Prints {"ports":[...]} once all listen.
const http = require('node:http');

const servers = process.argv.slice(2).map((status) => {
  let received = 0;
  const server = http.createServer((request, response) => {
    if (request.method === 'GET') return void response.end(String(received));
    request.resume();
    request.on('end', () => {
      received += 1;
      if (status !== 'never') response.writeHead(Number(status)).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
});
Promise.all(servers).then((ports) => process.stdout.write(`${JSON.stringify({ ports })}\n`));
