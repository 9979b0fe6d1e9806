#!/usr/bin/env bash
# Placeholder until the TUI lands: nothing to drive yet.
echo "e2e: no terminal tests yet"
