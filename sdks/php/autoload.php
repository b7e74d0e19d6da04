<?php

declare(strict_types=1);

// For use without Composer: `require 'path/to/sdks/php/autoload.php';`.
// It maps the PSR-4 prefix `Waytrack\` to src/, exactly as composer.json does.
spl_autoload_register(static function (string $class): void {
    $prefix = 'Waytrack\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $relative = substr($class, strlen($prefix));
    $file = __DIR__ . '/src/' . str_replace('\\', '/', $relative) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
