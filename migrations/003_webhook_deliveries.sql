-- Signed notifications that were answered 200, by webhook-id, so a repeated delivery
-- is answered with the first answer and not applied again.
CREATE TABLE webhook_deliveries (
  webhook_id  text PRIMARY KEY,
  response    text NOT NULL,
  received_at timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (received_at);
