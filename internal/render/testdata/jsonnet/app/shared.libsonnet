{ from: 'app' }
