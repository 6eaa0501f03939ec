import { routes } from "@/app/durable";

export const maxDuration = 60;
export const { GET, POST, PUT, PATCH, DELETE } = routes.metrics;
