"""The collector service: ``pldp serve`` (needs the ``service`` extra: FastAPI, uvicorn, pyarrow).

How a report travels, and which module holds each step::

    client --HTTP batch--> ingest (API, roles: auth) --validate: collect.prepare_batch-->
    writer (group commit) --collect.store_batch--> store (SQLite, WAL: reports + running tally)
    store --tally--> app: estimate, export (Parquet)

* :mod:`pldp.service.store`: the SQLite schema, its migrations, durable settings, reads; every SQL
  statement of the collector, behind named functions, in one module per group of tables.
* :mod:`pldp.service.writer`: the one writing thread; many requests per durable transaction;
  :mod:`pldp.service.seen` its in-memory index of stored report ids (a keyed hash table);
  :mod:`pldp.service.faults` a store that cannot take writes (503 answers, the writer lock's
  timeout, the health check).
* :mod:`pldp.service.collect`: what a request does to the store (validate, dedupe, count);
  :mod:`pldp.service.refusals` what a writer job refuses (domain errors, which
  :mod:`pldp.service.errors` maps to HTTP statuses in one table).
* :mod:`pldp.service.auth`: tokens (hashed, constant-time, each with a public id, an expiry and
  revocation) and roles; :mod:`pldp.service.codes`: the one-time respondent codes of invited
  campaigns, each used in the transaction that stores its report.
* :mod:`pldp.service.app`: the HTTP API (``/v1``, OpenAPI at ``/openapi.json``); its
  ``create_app`` only wires the parts: :mod:`pldp.service.state` (the shared state: store,
  writer, readers, cached specs, limits), :mod:`pldp.service.routes` (one router per resource:
  health, campaigns, codes, reports, estimates, exports, tokens), :mod:`pldp.service.deps` (roles and
  campaigns as FastAPI dependencies), :mod:`pldp.service.models` (the Pydantic models of every
  body), :mod:`pldp.service.errors` (the JSON refusals), :mod:`pldp.service.openapi` (the schema)
  and :mod:`pldp.service.ingest` (report submission and its fast path).
* :mod:`pldp.service.server`: running it (the commands ``pldp serve`` and ``pldp campaign ...``
  live in :mod:`pldp.cli.service`); a standard-library client of the API is
  :mod:`pldp.deploy.remote` (outside this package: it needs none of the ``service`` extra).
* The bounds on clients (``docs/threat-model.md``): :mod:`pldp.service.ratelimit` (reports per
  client address), :mod:`pldp.service.crossorigin` (JSON bodies only, from allowed origins),
  :mod:`pldp.service.jsonlimits` (depth, digits and values of a body, before parsing),
  :mod:`pldp.service.bodies` (bytes of bodies parsed at once) and
  :mod:`pldp.service.connections` (request deadlines and a connection cap in uvicorn's protocol).
* :mod:`pldp.service.rollover`: report files written on a schedule (crash-safe, one exporter per
  store) and retention; :mod:`pldp.service.dayfiles`: a campaign's reports as one file per day
  (``pldp campaign export --out-dir``).
* :mod:`pldp.service.pages`: the web pages, served by the same process from ``static/``: the
  survey page ``/c/{id}``, where the browser randomizes the answer with ``pldp-client.mjs`` (the
  same file as ``clients/js/pldp-client.mjs``) and sends only the report; the analyst's dashboard
  ``/dashboard/{id}`` (estimates as SVG charts with intervals, refreshed every 2 s, beside the
  spec's exact privacy table); and ``/static/...``. They load nothing from any other origin
  (``Content-Security-Policy: default-src 'self'``).

Trust boundaries: the collector sees reports, never answers; analysts see estimates and, when
granted, raw reports; the admin manages campaigns and tokens but reads no data.
"""
