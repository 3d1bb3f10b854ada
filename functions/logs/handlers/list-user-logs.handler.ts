// GET /logs/user is the SPEC's other name for GET /logs. The manifest gives each path its own route
// id (and handler module), so this module re-exports the same definition.
export { default } from './list-logs.handler.ts';
