-- Whether the provider's last answer to a payment's refund was a refusal (a 4xx but a timeout's or a throttle's),
-- rather than no usable answer. Only a refusal tells that no refund was made under the payment's refund key (a refund
-- made before would have been answered, as any repeat under a key is), so only then may an operator confirm the refund
-- settled another way (POST /operator/payments/{orderId}/confirm-refunded): a call that timed out may have refunded.
ALTER TABLE payment ADD COLUMN refund_refused boolean NOT NULL DEFAULT false;
