// Ids and times the OpenAPI examples share, so one job or key reads the same on every route.

export const EXAMPLE_JOB_ID = '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b';
export const EXAMPLE_KEY_ID = '0190a1b2-3e4f-7a5b-9c6d-7e8f9a0b1c2d';
export const EXAMPLE_REQUEST_ID = '0190a1b2-c4d5-7e6f-8a7b-9c0d1e2f3a4b';
/** When the example job was submitted; other example times are near it. */
export const EXAMPLE_TIME = '2025-06-02T09:30:00.000Z';
