export * from './types.ts';
export { routes, routesByArea, handlerModulePath, areaModuleImport, entryPoints, entryPointModulePath, entryPointsOf } from './routes.ts';
export { tables, type TableName } from './tables.ts';
export { buckets, type BucketName } from './buckets.ts';
export { areas, areaNamed } from './areas.ts';
export { PORT_RESOURCES, KERNEL_RESOURCES, resourcesOf, modulesOfFunction, checkAreas, type FunctionResources, type KernelPortName } from './ports.ts';
