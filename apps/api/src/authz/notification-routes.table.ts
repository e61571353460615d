import type { Fixtures } from './authz-fixtures.js';
import { all, fixed, one, readA, writeA, type RouteEntry } from './route-expectations.js';

// Notification subscriptions of customer A (issue 15 part 4, notifications.test.ts): read like
// services, written by admins and operators in scope; nested routes are found only in scope.
const subscriptionOfA = async (f: Fixtures) =>
  (
    await f.h.container.db.notificationSubscription.create({
      data: {
        customerId: f.customerA,
        url: 'https://hooks.example.com/authz',
        events: ['deployment.failed'],
        secret: 'authz-secret',
      },
    })
  ).id;
const deliveryOfA = async (f: Fixtures) =>
  (
    await f.h.container.db.notificationDelivery.create({
      data: {
        subscriptionId: await subscriptionOfA(f),
        event: 'deployment.failed',
        body: { authz: true },
        status: 'failed',
        nextAttemptAt: null,
      },
    })
  ).id;
export const NOTIFICATION_ROUTES: Record<string, RouteEntry> = {
  'POST /api/notification-subscriptions': one(
    'create for A',
    { admin: [201, 201, 403], operator: [201, 201, 403], viewer: [403, 403, 403] },
    (f) => ({
      url: '/api/notification-subscriptions',
      payload: {
        url: 'https://hooks.example.com/x',
        events: ['deployment.failed'],
        customer_id: f.customerA,
      },
    }),
  ),
  'GET /api/notification-subscriptions': one(
    'list (filtered, see notifications tests)',
    all(200),
    fixed('/api/notification-subscriptions'),
  ),
  'GET /api/notification-subscriptions/:id': one('detail', readA(200), async (f) => ({
    url: `/api/notification-subscriptions/${await subscriptionOfA(f)}`,
  })),
  'PATCH /api/notification-subscriptions/:id': one('disable', writeA(200), async (f) => ({
    url: `/api/notification-subscriptions/${await subscriptionOfA(f)}`,
    payload: { enabled: false },
  })),
  'DELETE /api/notification-subscriptions/:id': one('delete', writeA(204), async (f) => ({
    url: `/api/notification-subscriptions/${await subscriptionOfA(f)}`,
  })),
  'POST /api/notification-subscriptions/:id/rotate-secret': one('rotate', writeA(200), async (f) => ({
    url: `/api/notification-subscriptions/${await subscriptionOfA(f)}/rotate-secret`,
  })),
  'GET /api/notification-subscriptions/:id/deliveries': one('delivery log', readA(200), async (f) => ({
    url: `/api/notification-subscriptions/${await subscriptionOfA(f)}/deliveries`,
  })),
  'POST /api/notification-deliveries/:id/redeliver': one('redeliver', writeA(202), async (f) => ({
    url: `/api/notification-deliveries/${await deliveryOfA(f)}/redeliver`,
  })),
};
