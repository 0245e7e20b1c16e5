"""Exit 0 when the PostgreSQL and Redis URLs given as arguments both answer, 1 otherwise."""

import sys

import psycopg
import redis


def main(database_url: str, redis_url: str) -> int:
    try:
        psycopg.connect(database_url, connect_timeout=3).close()
        redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except (psycopg.Error, redis.RedisError) as exc:
        print(f"not reachable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
