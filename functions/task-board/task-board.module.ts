import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createTaskStore } from './task.store.ts';

/**
 * The task board (SPEC 4.14): each user's tasks, private to their owner. Edits name the version
 * they were read at, so concurrent edits of one task never silently overwrite each other (409).
 * The area is `task-board` because `tasks` is the kernel's task queue port; its paths are /tasks.
 */
export const taskBoardArea = defineArea({
  name: 'task-board',
  routes: [
    { method: 'POST', path: '/tasks', handler: 'create-task', auth: 'required' },
    { method: 'GET', path: '/tasks', handler: 'list-tasks', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/tasks/bulk', handler: 'bulk-tasks', auth: 'required' },
    { method: 'GET', path: '/tasks/{taskId}', handler: 'get-task', auth: 'required', callers: 'role' },
    { method: 'PUT', path: '/tasks/{taskId}', handler: 'update-task', auth: 'required' },
    { method: 'DELETE', path: '/tasks/{taskId}', handler: 'delete-task', auth: 'required' },
    { method: 'PUT', path: '/tasks/{taskId}/status', handler: 'set-task-status', auth: 'required' },
  ],
  tables: [
    // One partition per owner; an index per sort (task.store.ts), each sorted by a number.
    {
      name: 'task-board',
      partitionKey: 'userId',
      sortKey: 'taskId',
      numberKeys: ['createdAt', 'updatedAt', 'dueSort', 'prioritySort'],
      indexes: [
        { name: 'byCreated', partitionKey: 'userId', sortKey: 'createdAt' },
        { name: 'byUpdated', partitionKey: 'userId', sortKey: 'updatedAt' },
        { name: 'byDue', partitionKey: 'userId', sortKey: 'dueSort' },
        { name: 'byPriority', partitionKey: 'userId', sortKey: 'prioritySort' },
      ],
    },
  ],
  provides: {
    taskBoard: providePort({ tables: ['task-board'] }, ({ db }) => createTaskStore(db)),
  },
});
