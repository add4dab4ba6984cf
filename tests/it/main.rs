//! The integration tests: one crate, one binary, one module per concern,
//! named like the code it tests. Behavioural cases run on SQLite and on
//! PostgreSQL through `dual_backend!` (see [`support`]); each case's
//! PostgreSQL half has `postgres` in its name, so `cargo test --features
//! postgres -- postgres` selects exactly those halves.
//!
//! A concern too large for one file is split by requirement into
//! `<concern>_<group>` modules (`resolve_validation`, `resolve_cancel`, …);
//! what only those pieces share is in `<concern>_support`, what several
//! concerns share in [`support`].
//!
//! A name filter selects modules, e.g. `cargo test --test it doors_` (every
//! door), `cargo test --test it delivery_` or `cargo test --test it
//! resolve_`.

#[macro_use]
mod support;

// The repository explains itself: layers that import downwards only, and
// every cited requirement id defined in docs/rules.md.
mod builds;
mod layers;
mod rules_doc;

// The store: opening a database, its schema, the SQL it renders, the plans.
mod listing_plan;
mod listing_settled;
mod sql_rendering;
mod store_open;
mod store_schema;

// The rules: activeness, capabilities, visibility, and their agreement.
mod agreement;
mod rules_activeness;
mod rules_capabilities;
mod rules_visibility;
mod rules_visibility_keys;

// The domain: asking, the lifecycle, listing, resolving, claiming, waiting
// and delivery, surviving crashes.
mod ask_idempotency;
mod ask_support;
mod ask_validation;
mod ask_writes;
mod claim_processes;
mod claim_races;
mod crash;
mod deadlines_asking;
mod deadlines_lifecycle;
mod deadlines_settling;
mod deadlines_sweeping;
mod delivery_async_wait;
mod delivery_interleavings;
mod delivery_lease;
mod delivery_processes;
mod delivery_push;
mod delivery_waiting_dispatcher;
mod delivery_waiting_outbox;
mod delivery_waiting_outcomes;
mod delivery_waiting_support;
mod delivery_waiting_timeouts;
mod delivery_waiting_wait_bundle;
mod delivery_waiting_wakeups;
mod events;
mod ledger_read;
mod ledger_written;
mod lifecycle;
mod lifecycle_names;
mod links;
mod listing_envelopes;
mod listing_exclusions;
mod listing_pagination;
mod listing_pending_actions;
mod listing_summary;
mod listing_support;
mod listing_visibility_order;
mod mail;
mod mcp_asking;
mod mcp_tasks;
mod nudges;
mod ops_counts;
mod people;
mod people_visibility;
mod quorum;
mod quorum_races;
mod resolve_auth;
mod resolve_cancel;
mod resolve_claim_replay;
mod resolve_normalization;
mod resolve_single_select;
mod resolve_support;
mod resolve_validation;
mod retention;

// The doors: envelopes, the JSON layer, MCP, the C ABI, HTTP, the command
// line, and what the README promises.
mod cli;
mod cli_asking;
mod cli_links;
mod cli_nudges;
mod cli_quorum;
mod cli_text;
mod contract_schemathesis;
mod contract_text;
mod demo;
mod doors_envelopes;
mod doors_ffi_consumers;
mod doors_ffi_header;
mod doors_json_checks;
mod doors_json_codes;
mod doors_json_hygiene;
mod doors_json_operations;
mod doors_json_support;
mod doors_mcp;
mod doors_mcp_server;
mod doors_mcp_typescript;
mod doors_schemas;
mod hostile_input;
mod http_auth;
mod http_checks;
mod http_events;
mod http_fanout;
mod http_hosts;
mod http_one_trip;
mod http_race;
mod http_revocation;
mod http_routes;
mod http_serve;
mod http_slow_clients;
mod links_http;
mod prod_outage;
mod prod_pooler;
mod readme_examples;
mod readme_run;
mod web_inbox_answer_links;
mod web_inbox_answering;
mod web_inbox_decisions;
mod web_inbox_history;
mod web_inbox_honest;
mod web_inbox_keyboard;
mod web_inbox_links;
mod web_inbox_listing;
mod web_inbox_notice;
mod web_inbox_nudges;
mod web_inbox_people;
mod web_inbox_quorum;
mod web_inbox_security;
mod web_inbox_support;
mod webhooks_delivery;
mod webhooks_endpoints;
mod webhooks_isolation;
mod webhooks_links;
mod webhooks_nudges;
mod webhooks_targets;
