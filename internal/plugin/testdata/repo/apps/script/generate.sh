#!/bin/sh
echo "{apiVersion: v1, kind: ConfigMap, metadata: {name: script}}"
