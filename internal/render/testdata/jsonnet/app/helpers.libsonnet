error 'a .libsonnet file is never evaluated on its own'
