export * from './types.ts';
export { routes, routesByArea, handlerModulePath } from './routes.ts';
export { tables, type TableName } from './tables.ts';
export { buckets, type BucketName } from './buckets.ts';
