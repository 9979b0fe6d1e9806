#!/usr/bin/env bash
# Placeholder until the real-engine suite lands.
echo "engines: not built yet ($1)"
