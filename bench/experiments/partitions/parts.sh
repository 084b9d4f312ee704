#!/bin/bash
# Creates expg.parted with $1 partitions (see run.sh).
# $1: number of partitions
P=$1
psql -q -h 127.0.0.1 -U postgres -d test <<SQL
DROP TABLE IF EXISTS expg.parted;
CREATE TABLE expg.parted (part bigint NOT NULL, generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL, ordinal bigint NOT NULL, body text NOT NULL) PARTITION BY LIST (part);
CREATE TABLE expg.parted_1 PARTITION OF expg.parted FOR VALUES IN (1);
INSERT INTO expg.parted_1 SELECT * FROM expg.plain;
ALTER TABLE expg.parted_1 ADD PRIMARY KEY (generation, record_id);
CREATE UNIQUE INDEX ON expg.parted_1 (generation, ordinal);
DO \$\$ BEGIN
  FOR p IN 2..$P LOOP
    EXECUTE format('CREATE TABLE expg.parted_%s PARTITION OF expg.parted FOR VALUES IN (%s)', p, p);
    EXECUTE format('INSERT INTO expg.parted_%s SELECT %s, 1000 + %s, ''r'' || i, i, ''{}'' FROM generate_series(1, 100) i', p, p, p);
    EXECUTE format('ALTER TABLE expg.parted_%s ADD PRIMARY KEY (generation, record_id)', p);
    EXECUTE format('CREATE UNIQUE INDEX ON expg.parted_%s (generation, ordinal)', p);
  END LOOP;
END \$\$;
ANALYZE expg.parted;
SQL
