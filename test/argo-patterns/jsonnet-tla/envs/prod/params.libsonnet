{
  image: 'gcr.io/google-samples/gb-frontend:v5',
  port: 80,
}
