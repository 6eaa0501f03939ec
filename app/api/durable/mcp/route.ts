import { mcpRoute } from "@/app/mcp";

export const maxDuration = 60;
export const { GET, POST, PUT, PATCH, DELETE } = mcpRoute.handlers;
