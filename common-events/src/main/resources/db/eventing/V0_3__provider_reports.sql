-- How far a service has read a provider's report (work/ProviderReport: a payment provider's settlements, a carrier's
-- shipments), as the provider's own opaque cursors, so that a restart reads on from there. Each entry is looked at in
-- two runs: the next run reads from where the run before the last one ended (second_look_from).
CREATE TABLE provider_report (
    name             varchar(64)  PRIMARY KEY,
    second_look_from varchar(255) NOT NULL,
    last_end         varchar(255) NOT NULL,
    updated_at       timestamptz  NOT NULL
);
