<?php

declare(strict_types=1);

// The library through its own autoloader (the way it is used without Composer), then the
// tests' shared helpers.
require __DIR__ . '/../autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Waytrack\\Tests\\';
    if (str_starts_with($class, $prefix)) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
